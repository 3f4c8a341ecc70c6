# -DPIPEWORKS_BUNDLED_DEPS=DIR takes the header-only dependencies from DIR (made by
# scripts/bundle_header_deps) instead of find_package, for machines without them (bench/gpu_check).
set(PIPEWORKS_BUNDLED_DEPS "" CACHE PATH
    "Directory made by scripts/bundle_header_deps (relative: to the source dir); empty: find_package")
if(NOT PIPEWORKS_BUNDLED_DEPS)
  return()
endif()

get_filename_component(_bundle "${PIPEWORKS_BUNDLED_DEPS}" ABSOLUTE BASE_DIR "${PROJECT_SOURCE_DIR}")
foreach(_piece include/fmt/format.h include/fmt/format-inl.h include/nlohmann/json.hpp
               include/CLI/CLI.hpp include/catch2/catch.hpp include/boost/version.hpp include/boost/graph
               cmake/Catch.cmake cmake/CatchAddTests.cmake)
  if(NOT EXISTS "${_bundle}/${_piece}")
    message(FATAL_ERROR "PIPEWORKS_BUNDLED_DEPS=${_bundle} lacks ${_piece}; remake it with "
                        "scripts/bundle_header_deps on a machine that has the packages")
  endif()
endforeach()

# The number the first of the headers that #defines NAME gives it, e.g.
# _pipeworks_header_number(v CATCH_VERSION_MAJOR catch2/catch.hpp).
function(_pipeworks_header_number out name)
  foreach(header ${ARGN})
    if(EXISTS "${_bundle}/include/${header}")
      file(STRINGS "${_bundle}/include/${header}" _line REGEX "#define ${name} +[0-9]+")
      if(_line)
        string(REGEX REPLACE ".*#define ${name} +([0-9]+).*" "\\1" _value "${_line}")
        set(${out} "${_value}" PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
  set(${out} "?" PARENT_SCOPE)
endfunction()
_pipeworks_header_number(_catch CATCH_VERSION_MAJOR catch2/catch.hpp)
# nlohmann_json 3.11 moved its version to detail/abi_macros.hpp.
set(_json_headers nlohmann/json.hpp nlohmann/detail/abi_macros.hpp)
_pipeworks_header_number(_json_major NLOHMANN_JSON_VERSION_MAJOR ${_json_headers})
_pipeworks_header_number(_json_minor NLOHMANN_JSON_VERSION_MINOR ${_json_headers})
_pipeworks_header_number(_boost BOOST_VERSION boost/version.hpp)
# The same minimum versions as the find_package calls in CMakeLists.txt and tests/CMakeLists.txt.
if(NOT _catch EQUAL 2 OR NOT _json_major EQUAL 3 OR _json_minor LESS 10 OR _boost LESS 107400)
  message(FATAL_ERROR "PIPEWORKS_BUNDLED_DEPS=${_bundle}: need Catch2 2, nlohmann_json >= 3.10, "
                      "Boost >= 1.74; it has Catch2 ${_catch}, nlohmann_json ${_json_major}.${_json_minor}, "
                      "Boost ${_boost}")
endif()

# The target names the folders link today. Imported targets' include dirs are SYSTEM includes,
# so the warning flags stay quiet about them.
foreach(_target fmt::fmt nlohmann_json::nlohmann_json CLI11::CLI11 Catch2::Catch2 Boost::graph)
  add_library(${_target} INTERFACE IMPORTED)
  set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_bundle}/include")
endforeach()
set_target_properties(fmt::fmt PROPERTIES INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
set_target_properties(Boost::graph PROPERTIES INTERFACE_COMPILE_DEFINITIONS BOOST_ALL_NO_LIB)
list(APPEND CMAKE_MODULE_PATH "${_bundle}/cmake")  # include(Catch) in tests/
message(STATUS "pipeworks: fmt (header-only), nlohmann_json, CLI11, Catch2, Boost.Graph from ${_bundle}")
