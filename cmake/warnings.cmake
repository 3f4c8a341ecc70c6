# One place that sets the project's warning flags (and -Werror when PIPEWORKS_WERROR is on).
function(pipeworks_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                         -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference)
  if(PIPEWORKS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Helper for each folder: one library made of every .cc in the folder.
function(pipeworks_folder_library name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_LIBS})
  pipeworks_warnings(${name})
endfunction()
