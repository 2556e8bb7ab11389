# models/redis/commands: Redis 7.0 commands over the model's keyspace and
# EVAL/EVALSHA with Lua 5.1 (issue #31). Part of fencesim_models; included
# by models/CMakeLists.txt after add_library(fencesim_models).
# Lua 5.1 and the cjson/bit modules Redis loads come from Debian
# (liblua5.1-0-dev, lua-cjson-dev, lua-bitop-dev; tools/deps.sh). They are
# linked by plain library name so that the installed package's exported
# fencesim::models needs no imported target from here.
find_package(PkgConfig REQUIRED)
pkg_check_modules(FENCESIM_LUA REQUIRED lua5.1 lua5.1-cjson lua5.1-bitop)
target_sources(fencesim_models PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/commands.cpp
  ${CMAKE_CURRENT_LIST_DIR}/script.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/script.cpp PROPERTIES
  INCLUDE_DIRECTORIES "${FENCESIM_LUA_INCLUDE_DIRS}")
target_link_libraries(fencesim_models PRIVATE ${FENCESIM_LUA_LIBRARIES})
