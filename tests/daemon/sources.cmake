# Test sources of daemon/ (the service: CLI, reload, faults, systemd notify, examples) and the
# shared integration-test helpers of tests/support/ (appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  daemon/cli_test.cpp
  daemon/containment_test.cpp
  daemon/docker_config_test.cpp
  daemon/examples_test.cpp
  daemon/fake_backend_test.cpp
  daemon/fault_test.cpp
  daemon/gateway_gauges_test.cpp
  daemon/idle_trim_test.cpp
  daemon/port_test.cpp
  daemon/reload_test.cpp
  daemon/sd_notify_test.cpp
  daemon/service_notify_test.cpp
  support/child_process.cpp
  support/http_wait.cpp
  support/fake_backend_process.cpp
  support/promtool.cpp
  support/raw_connection.cpp
  support/swapd_process.cpp
  support/event_stream.cpp
)
