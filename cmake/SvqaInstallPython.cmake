# Run by `cmake --install`: records the Python `svqa report` draws its figures with in
# PREFIX/share/svqa/python. $SVQA_PYTHON at install time, else the build's -DSVQA_PYTHON (default:
# the source tree's .venv). A recorded Python inside the source tree dies with it: say so.
if(DEFINED ENV{SVQA_PYTHON} AND NOT "$ENV{SVQA_PYTHON}" STREQUAL "")
  set(python "$ENV{SVQA_PYTHON}")
else()
  set(python "${SVQA_CONFIGURED_PYTHON}")
endif()
set(record "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/share/svqa/python")
message(STATUS "Installing: ${record} (figures drawn with ${python})")
file(WRITE "${record}" "${python}\n")
if(NOT EXISTS "${python}")
  message(WARNING "svqa report: the recorded Python ${python} does not exist; set SVQA_PYTHON when installing")
elseif(python MATCHES "^${SVQA_CONFIGURED_SOURCE_DIR}/")
  message(STATUS "svqa report: ${python} lies in the source tree; installing with SVQA_PYTHON=<a Python with "
                 "matplotlib elsewhere> lets the install outlive the tree")
endif()
