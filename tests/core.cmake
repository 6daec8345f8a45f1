clphmm_add_test(test_reference)
clphmm_add_test(test_reference_kernels)
clphmm_add_test(test_model)
clphmm_add_test(test_bound)
clphmm_add_test(test_schedule)
clphmm_add_test(test_pool)
clphmm_add_test(test_first)
clphmm_add_test(test_stage)
clphmm_add_test(test_chunks)
clphmm_add_test(test_spans)
clphmm_add_test(test_cache)
target_link_libraries(test_cache PRIVATE Threads::Threads)
clphmm_add_test(test_device)
clphmm_add_test(test_api)
set_tests_properties(test_device PROPERTIES TIMEOUT 1800)
# The fused multiply-add variants (the GPU default) on this machine's device.
add_test(NAME test_device_fma COMMAND test_device)
set_tests_properties(test_device_fma PROPERTIES TIMEOUT 1800
  ENVIRONMENT "${CLPHMM_TEST_ENV};CLPHMM_FMA=1;CLPHMM_TEST_SKIP_LONG=1")
# Small long-read tiles (32 rows) in work-groups of 8 lane groups: most reads
# are long reads, and up to 8 of their tiles run concurrently.
add_test(NAME test_device_tiles COMMAND test_device)
set_tests_properties(test_device_tiles PROPERTIES TIMEOUT 1800
  ENVIRONMENT "${CLPHMM_TEST_ENV};CLPHMM_VARIANTS=4x4/64,8x4/64;CLPHMM_DOUBLE_VARIANTS=4x4/64,8x4/64;CLPHMM_TEST_SKIP_LONG=1")
# 77 = no OpenCL device here (CI sets CLPHMM_TEST_REQUIRE_DEVICE, so never).
set_tests_properties(test_device test_device_fma test_device_tiles PROPERTIES
  SKIP_RETURN_CODE 77)
# Several threads on one context and on a context each.
clphmm_add_test(test_threads)
set_tests_properties(test_threads PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
# Threads creating the process's first contexts at once (in child processes:
# each gets one first use).
clphmm_add_test(test_first_use)
set_tests_properties(test_first_use PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
# Several devices in one context: the machine's first device twice ("0,0")
# against one device, bit for bit; small chunks (CLPHMM_CHUNK_CELLS, set by
# the test) so that a small workload is shared.
clphmm_add_test(test_multi test_multi.c workload.c)
set_tests_properties(test_multi PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
