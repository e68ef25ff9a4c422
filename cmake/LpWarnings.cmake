# Strict warnings for our own code (never for third-party headers), sanitizers on request.
add_library(lp_warnings INTERFACE)
target_compile_options(lp_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
  -Wmissing-prototypes -Wformat=2 -Wformat-security -Wpointer-arith -Wcast-qual
  -Wwrite-strings -Wundef -Wvla -Wnull-dereference -Wimplicit-fallthrough
  -include ${CMAKE_SOURCE_DIR}/src/core/banned.h>)
if(LP_WERROR OR DEFINED ENV{CI})
  target_compile_options(lp_warnings INTERFACE $<$<COMPILE_LANGUAGE:C>:-Werror>)
endif()
if(LP_SANITIZE)
  # The injected tracer opts out (it lives inside other people's processes); see inject/.
  set(LP_SAN_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:${LP_SAN_FLAGS}>")
  add_link_options(${LP_SAN_FLAGS})
endif()
