# `cmake --install build` and `cpack -G DEB` (from the build folder): kvbench, its man page,
# the case suite, the examples, the specs and the Python package under the usual prefixes
# (README "Installing kvbench"). kvbench needs no file of the source tree at run time: the
# SPIR-V (tools/embed_spirv.cmake) and the case schema (tools/embed_schema.cmake) are in the
# binary, and case files name their input files relative to their own folder.
include(GNUInstallDirs)

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
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "mesa-vulkan-drivers, python3, python3-numpy, python3-xxhash")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch")
include(CPack)
