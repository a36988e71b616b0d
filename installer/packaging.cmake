# CPack: a .deb that depends on Debian's Qt (there is no Linux deploy tool for Qt 6.4) and a
# .tar.gz of the same tree. `cmake --build build --target package` makes both.
set(CPACK_PACKAGE_NAME "waste-studio")
set(CPACK_PACKAGE_VENDOR "WASTE Studio")
set(CPACK_PACKAGE_CONTACT "WASTE Studio developers <dev@waste.studio>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run huge mixture-of-experts models on an ordinary computer")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGE_FILE_NAME "waste-studio-${PROJECT_VERSION}-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# dpkg-shlibdeps fills in libc and the libqt6* libraries we link.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# QML modules and plugins are loaded at run time, so shlibdeps cannot see them. The image
# format plugins let the chat read WebP, TIFF and the other formats Qt decodes.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "qml6-module-qtquick, qml6-module-qtquick-controls, qml6-module-qtquick-layouts, qml6-module-qtquick-window, qml6-module-qtquick-templates, qml6-module-qtqml-workerscript, qml6-module-qtqml, qml6-module-qtqml-models, qml6-module-qtquick-dialogs, qml6-module-qt-labs-folderlistmodel, qml6-module-qtcharts, libqt6sql6-sqlite, libqt6svg6, qt6-image-formats-plugins, fonts-dejavu-core")
set(CPACK_STRIP_FILES ON)
include(CPack)
