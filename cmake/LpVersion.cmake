# The version and the git commit the binaries were built from, refreshed at every build
# (a custom target that rewrites gen/lp_version.c only when the commit changes).
set(LP_VERSION_C ${CMAKE_BINARY_DIR}/gen/lp_version.c)
add_custom_target(lp_version
  COMMAND ${CMAKE_COMMAND} -DOUT=${LP_VERSION_C} -DSRC=${CMAKE_SOURCE_DIR}
          -DVERSION=${PROJECT_VERSION} -P ${CMAKE_SOURCE_DIR}/cmake/gen_version.cmake
  BYPRODUCTS ${LP_VERSION_C}
  COMMENT "" VERBATIM)
