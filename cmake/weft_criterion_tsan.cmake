# weft_link_criterion_tsan_shim(dir): under ThreadSanitizer, adds tests/support/criterion_tsan.c
# to every executable in `dir` and below that links Criterion, so that Criterion's runner can
# start (the file explains why: its sandbox maps memory where TSan forbids it). Called from
# the top CMakeLists.txt after every subdirectory has been added.
function(weft_link_criterion_tsan_shim dir)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
        get_target_property(type ${t} TYPE)
        get_target_property(libs ${t} LINK_LIBRARIES)
        if(type STREQUAL "EXECUTABLE" AND "PkgConfig::CRITERION" IN_LIST libs)
            target_sources(${t} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support/criterion_tsan.c)
            target_link_libraries(${t} PRIVATE ${CMAKE_DL_LIBS})
        endif()
    endforeach()
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(sub IN LISTS subdirs)
        weft_link_criterion_tsan_shim(${sub})
    endforeach()
endfunction()
