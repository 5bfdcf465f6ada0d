# `cmake --install` rules: what a service installation needs, in the conventional places.
#   bin/swapd                              the daemon
#   lib/systemd/system/swapd.service       the unit (found by systemd under /usr and /usr/local),
#                                          its paths rewritten for the install prefix
#   share/swapd/examples/*.yaml            duo.yaml (copy it to /etc/swapd/config.yaml),
#                                          duo-budget.yaml, demo.yaml, matrix.yaml
#   share/doc/swapd/README.md              the front page, and the manual beside it as in the
#   share/doc/swapd/docs/*.md              repository (so README's links to docs/ resolve), with
#   share/doc/swapd/docs/screenshots/*.png the dashboard's screenshots that docs/dashboard.md shows
#   libexec/swapd/fake-llama-server        the demo backend (only with SWAPD_BUILD_TESTS): kept off
#                                          PATH because it is not a real llama-server
include(GNUInstallDirs)

install(TARGETS swapd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES examples/duo.yaml examples/duo-budget.yaml examples/demo.yaml examples/matrix.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/swapd/examples)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
if(SWAPD_BUILD_TESTS)
  install(TARGETS fake-llama-server RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/swapd)
endif()

# examples/swapd.service names /usr/local paths; write the installed copy with the prefix chosen at
# install time (`cmake --install --prefix` changes CMAKE_INSTALL_PREFIX then, hence install(CODE)).
install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  file(READ \"${PROJECT_SOURCE_DIR}/examples/swapd.service\" unit)
  string(REPLACE \"/usr/local/bin/\" \"\${prefix}/${CMAKE_INSTALL_BINDIR}/\" unit \"\${unit}\")
  string(REPLACE \"/usr/local/share/doc/swapd/\" \"\${prefix}/${CMAKE_INSTALL_DOCDIR}/\" unit \"\${unit}\")
  set(unit_dir \"\$ENV{DESTDIR}\${prefix}/lib/systemd/system\")
  message(STATUS \"Installing: \${unit_dir}/swapd.service\")
  file(MAKE_DIRECTORY \"\${unit_dir}\")
  file(WRITE \"\${unit_dir}/swapd.service\" \"\${unit}\")
")
