# Test sources of backends/ (backend processes and the scheduler; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  backends/containment_test.cpp
  backends/guardian_test.cpp
  backends/launcher_test.cpp
  backends/load_progress_test.cpp
  backends/log_ring_test.cpp
  backends/matrix_solver_test.cpp
  backends/port_allocator_test.cpp
  backends/process_backend_test.cpp
  backends/process_backend_port_test.cpp
  backends/readiness_probe_test.cpp
  backends/residency_capacity_test.cpp
  backends/residency_policy_test.cpp
  backends/router_test.cpp
  backends/router_port_test.cpp
  backends/scheduler_matrix_test.cpp
  backends/scheduler_memory_test.cpp
  backends/scheduler_overlap_test.cpp
  backends/scheduler_queue_test.cpp
  backends/scheduler_reload_test.cpp
  backends/scheduler_test.cpp
  backends/slot_cache_test.cpp
  backends/slot_store_test.cpp
  backends/spawn_env_test.cpp
)
