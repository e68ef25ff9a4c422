# Third-party dependencies, all from Debian packages (scripts/install-deps installs them).
# With LP_STATIC_DEPS the .a archives are linked so the binaries run on a GPU host without them.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)

function(lp_find_dep var pcname header libname)
  pkg_check_modules(PC_${var} QUIET ${pcname})
  find_path(${var}_INCLUDE ${header} HINTS ${PC_${var}_INCLUDE_DIRS})
  # separate cache entries, so switching LP_STATIC_DEPS in an existing build folder takes effect
  if(LP_STATIC_DEPS)
    find_library(${var}_LIB_STATIC NAMES lib${libname}.a HINTS ${PC_${var}_LIBRARY_DIRS})
    set(${var}_LIB ${${var}_LIB_STATIC})
  else()
    find_library(${var}_LIB_SHARED NAMES ${libname} HINTS ${PC_${var}_LIBRARY_DIRS})
    set(${var}_LIB ${${var}_LIB_SHARED})
  endif()
  if(NOT ${var}_INCLUDE OR NOT ${var}_LIB)
    message(FATAL_ERROR "llmprof: ${pcname} not found (header ${header}, library ${libname}); "
      "run scripts/install-deps (or: apt-get install -y ${ARGN})")
  endif()
  set(${var}_INCLUDE ${${var}_INCLUDE} PARENT_SCOPE)
  set(${var}_LIB ${${var}_LIB} PARENT_SCOPE)
endfunction()

lp_find_dep(LP_YAML yaml-0.1 yaml.h yaml libyaml-dev)
lp_find_dep(LP_JANSSON jansson jansson.h jansson libjansson-dev)
lp_find_dep(LP_SQLITE sqlite3 sqlite3.h sqlite3 libsqlite3-dev)
lp_find_dep(LP_ZLIB zlib zlib.h z zlib1g-dev)

add_library(lp_deps INTERFACE)
target_include_directories(lp_deps INTERFACE ${LP_YAML_INCLUDE} ${LP_JANSSON_INCLUDE}
  ${LP_SQLITE_INCLUDE} ${LP_ZLIB_INCLUDE})
target_link_libraries(lp_deps INTERFACE ${LP_YAML_LIB} ${LP_JANSSON_LIB} ${LP_SQLITE_LIB}
  ${LP_ZLIB_LIB} Threads::Threads ${CMAKE_DL_LIBS} m)

# CUDA is optional: found with find_package(CUDAToolkit); nothing probes a GPU at configure time.
set(LP_HAVE_CUDA OFF)
set(LP_HAVE_NVCC OFF)
set(LP_FEATURE_SUMMARY "")
if(LP_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(LP_HAVE_CUDA ON)
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(LP_HAVE_NVCC ON)
    endif()
  endif()
endif()
if(LP_HAVE_CUDA AND LP_HAVE_NVCC)
  set(LP_FEATURE_SUMMARY "CUDA ${CUDAToolkit_VERSION} found: building the CUDA workload path and the CUPTI tracer")
elseif(LP_HAVE_CUDA)
  set(LP_FEATURE_SUMMARY "CUDA toolkit found but no nvcc: leaving out the CUDA workload path")
else()
  set(LP_FEATURE_SUMMARY "no CUDA toolkit: leaving out the CUDA workload path and the CUPTI half of the tracer (CLI, parsers, reports and CPU workload are built)")
endif()
