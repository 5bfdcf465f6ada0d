# Test sources of frontdoor/ (the request path; the integration tests run the real swapd with fake backends; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  frontdoor/client_fault_test.cpp
  frontdoor/dispatch_routes_test.cpp
  frontdoor/front_door_failure_test.cpp
  frontdoor/front_door_test.cpp
  frontdoor/header_snapshot_test.cpp
  frontdoor/inflight_test.cpp
  frontdoor/json_scan_test.cpp
  frontdoor/load_routes_test.cpp
  frontdoor/loading_state_test.cpp
  frontdoor/matrix_routing_test.cpp
  frontdoor/model_parity_test.cpp
  frontdoor/multipart_test.cpp
  frontdoor/ollama_models_test.cpp
  frontdoor/ollama_routes_test.cpp
  frontdoor/ollama_translate_test.cpp
  frontdoor/peers_test.cpp
  frontdoor/profiles_test.cpp
  frontdoor/proxy_message_test.cpp
  frontdoor/proxy_test.cpp
  frontdoor/request_test.cpp
  frontdoor/selector_choice_test.cpp
  frontdoor/selectors_test.cpp
)
