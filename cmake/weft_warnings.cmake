# weft_target_warnings(t): the PRIVATE warning set every weft target compiles with.
function(weft_target_warnings t)
    target_compile_options(${t} PRIVATE
        -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
        -Wstrict-prototypes -Wmissing-prototypes)
    if(WEFT_WERROR)
        target_compile_options(${t} PRIVATE -Werror)
    endif()
endfunction()

# Looser set for tests and benchmarks: Criterion's macros trip -Wconversion and friends.
function(weft_target_test_warnings t)
    target_compile_options(${t} PRIVATE -Wall -Wextra)
    if(WEFT_WERROR)
        target_compile_options(${t} PRIVATE -Werror)
    endif()
endfunction()
