# One place that sets the project's warning flags (and -Werror when PIPEWORKS_WERROR is on).
function(pipeworks_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                         -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference)
  if(PIPEWORKS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Helper for each folder: one library made of every .cc in the folder, or in each of its ROOMS
# (subfolders, as sim/spec, sim/engine, ...) when it has rooms.
function(pipeworks_folder_library name)
  cmake_parse_arguments(ARG "" "" "ROOMS;LIBS" ${ARGN})
  set(sources "")
  if(ARG_ROOMS)
    foreach(room ${ARG_ROOMS})
      file(GLOB room_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${room}/*.cc)
      list(APPEND sources ${room_sources})
    endforeach()
  else()
    file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  endif()
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_LIBS})
  pipeworks_warnings(${name})
endfunction()
