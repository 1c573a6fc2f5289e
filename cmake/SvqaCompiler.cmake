# Compiler settings shared by every svqa target.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  # The sloppiness settings let ccache cache compilations that use the torch PCH; CCACHE_BASEDIR
  # makes paths inside the checkout relative, so a moved checkout or a second worktree hits the cache.
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
      ${CCACHE_PROGRAM})
endif()

# Find the shared libraries (libtorch, yaml-cpp) at run time without LD_LIBRARY_PATH.
set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)

if(SVQA_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# Warnings apply to our targets only; third-party headers come in as SYSTEM includes.
function(svqa_target_warnings target)
  # -Wno-maybe-uninitialized: GCC 12 at -O3 reports std::string members it cannot track
  # (GCC bug 105593 and kin); -Wuninitialized still catches the real cases.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow=local -Wno-unused-parameter
                                           -Wno-maybe-uninitialized)
  # GCC 13's -Wdangling-reference flags every `const T& x = f(container, "key")` whose f returns a
  # reference into the container (the temporary is the key string): false positives that failed the
  # tests' build on the H100 machine's GCC 13.3 under -Werror.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 13)
    target_compile_options(${target} PRIVATE -Wno-dangling-reference)
  endif()
  if(SVQA_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# __FILE__ relative to the repo: registry errors name "strategies/x.cpp:12", and ccache hits
# survive moving the checkout.
# Under ccache's CCACHE_BASEDIR the compiler sees paths relative to the build directory, hence both maps.
file(RELATIVE_PATH svqa_source_from_build ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
string(REGEX REPLACE "/$" "" svqa_source_from_build "${svqa_source_from_build}")
add_compile_options(-ffile-prefix-map=${CMAKE_SOURCE_DIR}/= -ffile-prefix-map=${svqa_source_from_build}/=)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

# One precompiled torch header for every tensor-heavy target: `target_precompile_headers(T
# REUSE_FROM svqa_pch)`. Reuse needs identical flags, hence svqa_target_warnings here too.
function(svqa_define_pch)
  add_library(svqa_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/svqa_pch.cpp)
  target_link_libraries(svqa_pch PUBLIC svqa::torch)
  svqa_target_warnings(svqa_pch)
  target_precompile_headers(svqa_pch PRIVATE ${PROJECT_SOURCE_DIR}/cmake/svqa_pch.h)
endfunction()
