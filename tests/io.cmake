clphmm_add_test(test_io)
# The streaming reader; writes its scratch files into the build tree.
clphmm_add_test(test_reader)
target_compile_definitions(test_reader PRIVATE
  CLPHMM_TEST_TMPDIR="${CMAKE_CURRENT_BINARY_DIR}")
