# Install rules, the CMake package (weftConfig.cmake, weftTargets.cmake) and weft.pc.
#
# Consumers use weft in one of three ways, each proven by tests/consumers/ and
# tools/check_consumers.sh:
#   add_subdirectory(weft)           -> weft::weft, weft::jobs (the ALIAS targets)
#   find_package(weft CONFIG)        -> weft::weft, weft::jobs (imported, from this file)
#   pkg-config --cflags --libs weft  -> -I<prefix>/include -L<prefix>/lib -lweft -lweft_jobs
# Included from the top CMakeLists.txt after every target exists.
include(CMakePackageConfigHelpers)

set(WEFT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/weft"
    CACHE STRING "Where weftConfig.cmake is installed, relative to the prefix")
mark_as_advanced(WEFT_INSTALL_CMAKEDIR)

# ---- libraries and headers -------------------------------------------- >>install_targets
# Shared builds get a versioned soname (libweft.so.0); the ABI is the major version.
set_target_properties(weft_jobs weft PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
install(TARGETS weft_jobs weft
    EXPORT weftTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The public headers are everything under include/ (the C headers and weft.hpp, the C++
# layer) plus the generated version header.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/weft/version.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/weft)

# ---- CMake package ------------------------------------------------------ >>install_package
install(EXPORT weftTargets
    NAMESPACE weft::
    FILE weftTargets.cmake
    DESTINATION ${WEFT_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
    ${PROJECT_BINARY_DIR}/weftConfig.cmake
    INSTALL_DESTINATION ${WEFT_INSTALL_CMAKEDIR})
# 0.x releases: SameMajorVersion means any 0.y satisfies find_package(weft 0.1).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
    VERSION ${PROJECT_VERSION}
    COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
    DESTINATION ${WEFT_INSTALL_CMAKEDIR})

# ---- pkg-config --------------------------------------------------------- >>install_pc
# Paths in weft.pc are relative to ${prefix} when the install dirs are relative (the usual
# case), so the installed tree can be moved.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(WEFT_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    set(WEFT_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(WEFT_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(WEFT_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# Threads::Threads as a linker flag. With glibc >= 2.34 pthreads live in libc and FindThreads
# reports no flag; -pthread is still correct for gcc and clang, so it is the fallback.
if(CMAKE_THREAD_LIBS_INIT)
    set(WEFT_PC_THREADS "${CMAKE_THREAD_LIBS_INIT}")
else()
    set(WEFT_PC_THREADS "-pthread")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.pc.in ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
