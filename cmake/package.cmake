# The Debian package (make -f Makefile.wrapper deb, or cpack -G DEB in the build folder): the
# files `make install` installs (the tools, their man pages, the shell completions) under
# /usr, packed from this build's binaries. Its dependencies are computed by dpkg-shlibdeps
# (Debian's dpkg-dev) from the shared libraries the binaries link, so they follow the build:
# with PF_STATIC_DEPS the archives linked in (re2, elfutils, ...) are not dependencies, Cairo
# and Graphviz's libraries are.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pf)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "pf")
set(CPACK_PACKAGE_CONTACT "Seed 48b2c928 maintainers <maintainers@users.noreply.a-seed-48b2c928.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fast CPU profiling toolkit: record, fold, flame graphs, call graphs")
set(CPACK_PACKAGE_DESCRIPTION
    "pf is a set of small Unix filters for the classic Linux profiling flow: pf-record samples
stacks with perf events, pf-script prints them as perf script does, pf-collapse folds them
as stackcollapse-perf.pl does, pf-flamegraph draws flame graphs (SVG, PNG, PDF), pf-dot
draws call graphs for Graphviz and pf-diff compares two profiles.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# perf reads what pf-record writes, and the other way round; Graphviz draws pf-dot's DOT.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "linux-perf, graphviz")
include(CPack)
