# Test sources of memory/ (meters, footprints, budgets, prefetch; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  memory/amd_gpu_meter_test.cpp
  memory/history_store_test.cpp
  memory/machine_info_test.cpp
  memory/memory_budget_test.cpp
  memory/memory_meter_test.cpp
  memory/overlapped_swap_test.cpp
  memory/page_prefetch_test.cpp
  memory/residency_test.cpp
  memory/system_stats_test.cpp
)
