# Locates LibTorch and defines the imported target svqa::torch.
#
# Order: an explicit Torch_DIR or CMAKE_PREFIX_PATH (a CUDA libtorch archive or any torch
# wheel), else the torch installed in the repo's .venv (scripts/setup.sh makes it).

if(NOT Torch_DIR AND NOT CMAKE_PREFIX_PATH)
  set(_svqa_python "${CMAKE_SOURCE_DIR}/.venv/bin/python")
  if(NOT EXISTS "${_svqa_python}")
    message(FATAL_ERROR
      "LibTorch not found: no -DTorch_DIR= or CMAKE_PREFIX_PATH given, and no ${_svqa_python}. "
      "Run scripts/setup.sh, or pass -DTorch_DIR=<libtorch>/share/cmake/Torch.")
  endif()
  execute_process(
    COMMAND "${_svqa_python}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _svqa_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _svqa_rc)
  if(NOT _svqa_rc EQUAL 0)
    message(FATAL_ERROR "LibTorch not found: importing torch with ${_svqa_python} failed. Rerun scripts/setup.sh.")
  endif()
  set(Torch_DIR "${_svqa_torch_prefix}/Torch" CACHE PATH "LibTorch CMake config directory")
endif()

# TorchConfig looks for CUDA pieces only when the LibTorch build has them; warnings it
# prints about kineto are harmless on the CPU build.
find_package(Torch REQUIRED)
message(STATUS "svqa: LibTorch ${Torch_VERSION} from ${Torch_DIR}")

add_library(svqa_torch INTERFACE)
# SYSTEM: torch's own headers must not trip our -Werror.
target_include_directories(svqa_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
target_link_libraries(svqa_torch INTERFACE ${TORCH_LIBRARIES})
separate_arguments(_svqa_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(svqa_torch INTERFACE ${_svqa_torch_flags})
add_library(svqa::torch ALIAS svqa_torch)
