# The one-way arrows of ARCHITECTURE.md, checked on every #include "folder/…" line:
#   - engine/src: each folder may include only the folders its row of the "uses" table names
#     (and the public headers, waste/…);
#   - app/core: folders stand in levels, and a folder may include only folders of lower levels,
#     so no two folders use each other, directly or round a circle.
# Run as a test: cmake -DROOT=<source tree> -P check_includes.cmake. It fails naming every file
# and include that breaks the order, and also when a folder is missing from the lists below
# (a new folder takes its place in ARCHITECTURE.md and here first).
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "give -DROOT=<the source tree>")
endif()

# engine/src: folder -> the folders it may use.
set(ENGINE_FOLDERS format compute io quant text image model cache plan convert session capi)
set(uses_format "")
set(uses_compute "")
set(uses_io compute)
set(uses_quant format compute)
set(uses_text format)
set(uses_image "")
set(uses_model format quant image compute)
set(uses_cache format io model)
set(uses_plan format compute io quant model cache)
set(uses_convert format io quant text)
set(uses_session format compute io quant text image model cache plan)
set(uses_capi "")

# app/core: the level of each folder, lowest first; a folder uses only lower levels.
set(APP_LEVELS
    "singleton threads units prompt"
    "settings mcp convert generation"
    "download remote"
    "engine library"
    "demo server chat planner")

set(failures "")

function(check_tree base folders allowed_var_prefix)
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${base} ${base}/*)
  foreach(child IN LISTS children)
    if(IS_DIRECTORY ${base}/${child} AND NOT child IN_LIST folders)
      list(APPEND failures "${base}/${child}: a folder the include order does not place (tests/architecture/check_includes.cmake)")
    endif()
  endforeach()
  foreach(folder IN LISTS folders)
    file(GLOB_RECURSE files ${base}/${folder}/*.cpp ${base}/${folder}/*.hpp ${base}/${folder}/*.h)
    foreach(f IN LISTS files)
      file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"[a-z_0-9]+/")
      foreach(line IN LISTS lines)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([a-z_0-9]+)/.*" "\\1" used "${line}")
        if(used STREQUAL folder OR used STREQUAL "waste" OR NOT used IN_LIST folders)
          continue()
        endif()
        if(NOT used IN_LIST ${allowed_var_prefix}_${folder})
          file(RELATIVE_PATH rel ${ROOT} ${f})
          list(APPEND failures "${rel}: includes ${used}/, which ${folder}/ may not use")
        endif()
      endforeach()
    endforeach()
  endforeach()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

check_tree(${ROOT}/engine/src "${ENGINE_FOLDERS}" uses)

# The app's levels become "may use" lists: every folder of every lower level.
set(APP_FOLDERS "")
set(below "")
foreach(level IN LISTS APP_LEVELS)
  string(REPLACE " " ";" level_folders "${level}")
  foreach(folder IN LISTS level_folders)
    set(app_${folder} ${below})
  endforeach()
  list(APPEND APP_FOLDERS ${level_folders})
  list(APPEND below ${level_folders})
endforeach()
check_tree(${ROOT}/app/core "${APP_FOLDERS}" app)

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "includes against the order of ARCHITECTURE.md:\n  ${text}")
endif()
message(STATUS "engine/src and app/core include only downwards")
