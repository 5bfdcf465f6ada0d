# Test sources of config/ (appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  config/argv_split_test.cpp
  config/yaml_document_test.cpp
  config/macros_test.cpp
  config/loader_test.cpp
  config/groups_test.cpp
  config/bad_configs_test.cpp
  config/merge_test.cpp
  config/traps_test.cpp
  config/slot_cache_config_test.cpp
  config/proxy_url_test.cpp
  config/diff_test.cpp
  config/model_port_test.cpp
  config/matrix_config_test.cpp
  config/model_extras_test.cpp
  config/peers_config_test.cpp config/memory_config_test.cpp
  config/llama_swap_2026_test.cpp
  config/ui_config_test.cpp
  config/performance_config_test.cpp
)
