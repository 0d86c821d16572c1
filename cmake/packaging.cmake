# `cmake --install build` and `cpack -G DEB` (from the build folder): kvbench, its man page,
# the case suite, the examples, the specs and the Python package under the usual prefixes
# (README "Installing kvbench"). kvbench needs no file of the source tree at run time: the
# SPIR-V (tools/embed_spirv.cmake) and the case schema (tools/embed_schema.cmake) are in the
# binary, and case files name their input files relative to their own folder.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
# Two Debian packages: kvbench (the program, cases, docs, Python) and kvbench-dev (the C++
# library's headers, static library, CMake package and pkg-config file), Debian's -dev
# convention.
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME runtime)

install(TARGETS kvbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every case file and the data files they read (cases/models' configs, .npy inputs).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/cases/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kvbench/cases)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        PATTERN __pycache__ EXCLUDE)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/specs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/specs)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The Python package where Debian's python3 finds it (/usr/lib/python3/dist-packages), so the
# installed examples run with /usr/bin/python3; another prefix may set its own folder.
set(KVBENCH_PYTHON_INSTALL_DIR "lib/python3/dist-packages" CACHE STRING
    "Where `cmake --install` puts the kvbench Python package (relative to the prefix)")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/kvbench DESTINATION ${KVBENCH_PYTHON_INSTALL_DIR}
        FILES_MATCHING PATTERN "*.py")

# The man page: kvbench's own --help text of every subcommand (tools/make_manpage.cmake).
set(KVBENCH_MANPAGE ${CMAKE_BINARY_DIR}/kvbench.1)
add_custom_command(
  OUTPUT ${KVBENCH_MANPAGE}
  COMMAND ${CMAKE_COMMAND} -DKVBENCH=$<TARGET_FILE:kvbench> -DOUT=${KVBENCH_MANPAGE}
          -DVERSION=${PROJECT_VERSION} -P ${CMAKE_SOURCE_DIR}/tools/make_manpage.cmake
  DEPENDS kvbench ${CMAKE_SOURCE_DIR}/tools/make_manpage.cmake
  COMMENT "Man page from kvbench --help"
  VERBATIM)
add_custom_target(kvbench_manpage ALL DEPENDS ${KVBENCH_MANPAGE})
install(FILES ${KVBENCH_MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# kvbench-dev: find_package(kvbench CONFIG) -> kvbench::golden, pkg-config kvbench-golden.
install(TARGETS kvbench_golden EXPORT kvbench-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/kvbench DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
set(KVBENCH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kvbench)
install(EXPORT kvbench-targets NAMESPACE kvbench:: DESTINATION ${KVBENCH_CMAKE_DIR} COMPONENT dev)
configure_file(${CMAKE_SOURCE_DIR}/cmake/kvbench-config.cmake.in ${CMAKE_BINARY_DIR}/kvbench-config.cmake COPYONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kvbench-config-version.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kvbench-config.cmake ${CMAKE_BINARY_DIR}/kvbench-config-version.cmake
        DESTINATION ${KVBENCH_CMAKE_DIR} COMPONENT dev)
# The .pc finds its prefix from its own folder, so the same file serves /usr and any --prefix.
file(RELATIVE_PATH KVBENCH_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_SOURCE_DIR}/cmake/kvbench-golden.pc.in ${CMAKE_BINARY_DIR}/kvbench-golden.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/kvbench-golden.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
# The example that uses them (examples/cpp) is installed with the other examples.

set(CPACK_PACKAGE_NAME kvbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "kvbench maintainers <kvbench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "reference-and-conformance testbench for KV-cache and attention kernels")
set(CPACK_PACKAGE_DESCRIPTION
    "kvbench computes double-precision golden results for KV-cache and attention operators from JSON case files,\nchecks a Vulkan implementation (or another backend: kvbench run --backend) against them with a tolerance\nreport, and writes golden files for other projects' CI.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The shared libraries' packages (libvulkan1, libxxhash0, libssl3, libstdc++6, ...) with their
# versions, found by dpkg-shlibdeps (dpkg-dev, installed by tools/setup.sh).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A Vulkan driver: lavapipe runs everything on the CPU where no GPU driver is installed. The
# Python package's and the examples' modules; torch for examples/torch.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "mesa-vulkan-drivers, python3, python3-numpy, python3-xxhash")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "python3-torch, kvbench-dev")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME kvbench)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME kvbench-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# A static library: its users link libxxhash; kvbench writes the goldens it reads.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libxxhash-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "kvbench (= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "kvbench's C++ library for C++ test suites: load a golden case (inputs, expected outputs, tolerances,\nattributes) and judge an implementation's outputs exactly as kvbench check does. CMake: find_package(kvbench\nCONFIG) gives kvbench::golden; pkg-config: kvbench-golden.")
include(CPack)
