# weft_target_sanitizers(t): applies WEFT_SANITIZER ("address,undefined" or "thread").
if(WEFT_SANITIZER STREQUAL "")
elseif(WEFT_SANITIZER STREQUAL "address,undefined" OR WEFT_SANITIZER STREQUAL "thread"
       OR WEFT_SANITIZER STREQUAL "address" OR WEFT_SANITIZER STREQUAL "undefined")
else()
    message(FATAL_ERROR "WEFT_SANITIZER must be empty, 'address,undefined' or 'thread' (got '${WEFT_SANITIZER}')")
endif()

# The link option is PUBLIC so that whatever links an instrumented weft in this build (tests,
# tools, an add_subdirectory consumer) pulls in the sanitizer runtime. It is BUILD_INTERFACE
# only: the installed package (weftTargets.cmake) and weft.pc never hand -fsanitize to a
# consumer; tools/check_consumers.sh checks that. Install a build without WEFT_SANITIZER.
function(weft_target_sanitizers t)
    if(NOT WEFT_SANITIZER STREQUAL "")
        target_compile_options(${t} PRIVATE -fsanitize=${WEFT_SANITIZER}
            -fno-omit-frame-pointer -fno-sanitize-recover=all)
        target_link_options(${t} PUBLIC "$<BUILD_INTERFACE:-fsanitize=${WEFT_SANITIZER}>")
    endif()
endfunction()

# Environment for ctest runs under the chosen sanitizer.
if(WEFT_SANITIZER STREQUAL "thread")
    set(WEFT_SANITIZER_ENV
        "TSAN_OPTIONS=halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=${PROJECT_SOURCE_DIR}/tools/tsan.supp")
elseif(NOT WEFT_SANITIZER STREQUAL "")
    set(WEFT_SANITIZER_ENV
        "ASAN_OPTIONS=detect_leaks=1 abort_on_error=0 exitcode=66"
        "UBSAN_OPTIONS=print_stacktrace=1 halt_on_error=1 exitcode=66")
else()
    set(WEFT_SANITIZER_ENV "")
endif()
