# clphmm-bench: the variant table and tuning-file code (test_tuning, a C
# test of src/tuning/tuning.c and the public plan functions) and the command end to
# end (test_bench.sh), whose JSON output json_check validates.
clphmm_add_test(test_tuning)
add_executable(json_check json_check.c)
clphmm_set_flags(json_check)
find_program(CLPHMM_BASH bash)
if(CLPHMM_BASH)
  add_test(NAME test_bench
           COMMAND ${CLPHMM_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_bench.sh
                   $<TARGET_FILE:clphmm_bench> $<TARGET_FILE:json_check>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data $<TARGET_FILE:clphmm_cli>)
  set_tests_properties(test_bench PROPERTIES
    ENVIRONMENT "${CLPHMM_TEST_ENV}"
    TIMEOUT 600)
else()
  message(STATUS "bash not found: test_bench is not registered")
endif()
