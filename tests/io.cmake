clphmm_add_test(test_io)
