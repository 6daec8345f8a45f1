# End-to-end tests of the `clphmm` command (tools/cli/): a bash script
# that runs the built binary on the fixtures in tests/data and on bad inputs
# it writes to a temporary directory. Device checks are skipped (not passed)
# when `clphmm --list-devices` finds no OpenCL device.
find_program(CLPHMM_BASH bash)
if(CLPHMM_BASH)
  add_test(NAME test_cli
           COMMAND ${CLPHMM_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.sh
                   $<TARGET_FILE:clphmm_cli> ${CMAKE_CURRENT_SOURCE_DIR}/data
                   ${PROJECT_VERSION})
  set_tests_properties(test_cli PROPERTIES
    ENVIRONMENT "${CLPHMM_TEST_ENV}"
    TIMEOUT 600)
else()
  message(STATUS "bash not found: test_cli is not registered")
endif()
