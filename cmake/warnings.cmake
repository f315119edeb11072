# Project-wide warning and sanitizer flags, applied through an interface target so that
# every servesim target opts in explicitly with target_link_libraries(... servesim_options).
add_library(servesim_options INTERFACE)
target_compile_options(servesim_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough>)
if(SERVESIM_WERROR)
  target_compile_options(servesim_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(SERVESIM_SANITIZE)
  # GCC 12's maybe-uninitialized analysis misfires on instrumented code (std::regex's
  # std::function moves under ASan at -O1); the plain build keeps the warning.
  target_compile_options(servesim_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
    -Wno-maybe-uninitialized>)
  target_link_options(servesim_options INTERFACE -fsanitize=address,undefined)
endif()
