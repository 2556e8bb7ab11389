# cli/loader.cmake — the scenario loader library (and, with FENCESIM_FUZZ,
# its libFuzzer target). Included from cli/CMakeLists.txt; paths are relative
# to this file so it works from any including directory.

add_library(fencesim_loader STATIC ${CMAKE_CURRENT_LIST_DIR}/loader.cpp)
add_library(fencesim::loader ALIAS fencesim_loader)
target_include_directories(fencesim_loader PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
target_link_libraries(fencesim_loader PUBLIC fencesim_models nlohmann_json::nlohmann_json)
set_target_properties(fencesim_loader PROPERTIES OUTPUT_NAME fencesim_loader POSITION_INDEPENDENT_CODE ON)

if(FENCESIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FENCESIM_FUZZ needs clang (configure with CC=clang CXX=clang++)")
  endif()
  # The loader and the libraries it calls are instrumented for coverage and
  # the sanitizers; only the fuzz target itself links libFuzzer's main.
  foreach(lib fencesim_loader fencesim_models fencesim_sim)
    if(TARGET ${lib})
      target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                                            -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    endif()
  endforeach()
  add_executable(fencesim_fuzz_loader ${CMAKE_CURRENT_LIST_DIR}/fuzz_loader.cpp)
  target_link_libraries(fencesim_fuzz_loader PRIVATE fencesim_loader)
  target_compile_options(fencesim_fuzz_loader PRIVATE -fsanitize=fuzzer,address,undefined
                                                -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(fencesim_fuzz_loader PRIVATE -fsanitize=fuzzer,address,undefined)
endif()
