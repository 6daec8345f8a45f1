# Resource limits on the device path (tests/test_limits.c); 77 = no device.
clphmm_add_test(test_limits)
set_tests_properties(test_limits PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
