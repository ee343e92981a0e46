# Flags live on an INTERFACE target that every project target links, not globally, so they never
# apply to code we do not own (cpp-best-practices/cmake_template).
add_library(firstwork_options INTERFACE)
add_library(firstwork::options ALIAS firstwork_options)
target_compile_options(firstwork_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
  $<$<BOOL:${FIRSTWORK_WARNINGS_AS_ERRORS}>:-Werror>)
if(FIRSTWORK_SANITIZE)
  target_compile_options(firstwork_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                         -fno-sanitize-recover=undefined)
  target_link_options(firstwork_options INTERFACE -fsanitize=address,undefined)
endif()
