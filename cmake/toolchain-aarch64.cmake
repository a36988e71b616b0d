# Cross build for aarch64 Linux with Debian's cross compiler (g++-aarch64-linux-gnu), used by
# the tst_aarch64_kernels test (tests/engine/aarch64_kernels.sh). Test programs run through
# qemu-aarch64 with the cross sysroot, so ctest in the cross build dir runs them as usual.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(WASTE_AARCH64_SYSROOT /usr/aarch64-linux-gnu)
find_program(WASTE_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(WASTE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${WASTE_QEMU_AARCH64} -L ${WASTE_AARCH64_SYSROOT})
endif()

# The header-only dependencies (nlohmann-json, stb) are the same for every architecture, but
# their directory is the host's /usr/include, which must not come before the cross
# compiler's own C library headers. So a small tree of links to just those two (and to
# nlohmann-json's CMake package, whose include path follows from where it is found) is made
# in the build dir and searched as a second root beside the sysroot.
set(WASTE_HOST_HEADERS ${CMAKE_BINARY_DIR}/host-headers)
file(MAKE_DIRECTORY ${WASTE_HOST_HEADERS}/include ${WASTE_HOST_HEADERS}/share/cmake)
file(CREATE_LINK /usr/include/nlohmann ${WASTE_HOST_HEADERS}/include/nlohmann SYMBOLIC)
file(CREATE_LINK /usr/include/stb ${WASTE_HOST_HEADERS}/include/stb SYMBOLIC)
file(CREATE_LINK /usr/share/cmake/nlohmann_json ${WASTE_HOST_HEADERS}/share/cmake/nlohmann_json SYMBOLIC)

set(CMAKE_FIND_ROOT_PATH ${WASTE_AARCH64_SYSROOT} ${WASTE_HOST_HEADERS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
