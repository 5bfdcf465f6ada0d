# Test sources of http/ (appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  http/http1_request_test.cpp
  http/http1_response_test.cpp
  http/http1_server_test.cpp
  http/http1_server_threads_test.cpp
  http/http_client_test.cpp
  http/listen_socket_test.cpp
  http/upstream_connection_test.cpp
)
