# A Debian package of what `cmake --install` installs (issue 44): the app, the CLI, the built-in models and
# samples, the desktop entry, the icon and the MIME type of saved sessions.
#   cmake --build --preset release && (cd build/release && cpack -G DEB)   →  attnlens_VERSION_amd64.deb
#   sudo apt install ./attnlens_*.deb      # apt pulls what it links against (Qt 6, OpenCV, oneDNN, …)
# The package installs under /usr; the programs find their data beside them (PREFIX/share/attnlens).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnlens)
set(CPACK_PACKAGE_VENDOR "Attention Lens")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "See attention inside transformer models, live, on a laptop CPU")
set(CPACK_PACKAGE_DESCRIPTION
    "Attention Lens shows attention inside transformer models on your own input, offline: translation "
    "(MarianMT), vision (ViT, DeiT, DINO), diffusion U-Nets and Stable Diffusion pipelines, text models "
    "(BERT, GPT-2, Llama, Qwen, Mistral, Gemma). A desktop app and a command-line tool, with built-in models.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # attnlens_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Attention Lens developers <attnlens@invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The shared libraries' packages come from dpkg-shlibdeps (dpkg-dev, part of build-essential); what is
# loaded at run time without being linked is named here: Qt's platform plugins (xcb, offscreen) and the
# font the exports are drawn with.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, fonts-dejavu-core")
# The menu and MIME caches are refreshed by dpkg's triggers (desktop-file-utils, shared-mime-info).
include(CPack)
