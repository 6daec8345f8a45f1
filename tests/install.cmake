# Packaging test (tests/install/check_install.sh): installs this build tree
# into a scratch prefix under the build directory, checks the installed files,
# and builds and runs a small consumer program (tests/install/consumer)
# through find_package(clphmm) and through pkg-config, shared and static.
# Only adds a test; included from tests/CMakeLists.txt.
find_program(CLPHMM_BASH bash)
if(CLPHMM_BASH)
  set(_clphmm_install_test_args
      --cmake=${CMAKE_COMMAND}
      --generator=${CMAKE_GENERATOR}
      --config=$<CONFIG>)
  # A sanitized library needs the consumers built with the same runtime.
  if(CLPHMM_SANITIZE)
    list(APPEND _clphmm_install_test_args
         "--cflags=-fsanitize=address,undefined -fno-omit-frame-pointer")
  elseif(CLPHMM_SANITIZE_THREAD)
    list(APPEND _clphmm_install_test_args "--cflags=-fsanitize=thread")
  endif()
  add_test(NAME test_install
           COMMAND ${CLPHMM_BASH}
                   ${CMAKE_CURRENT_SOURCE_DIR}/install/check_install.sh
                   ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_C_COMPILER}
                   ${CMAKE_CURRENT_BINARY_DIR}/install-test
                   ${_clphmm_install_test_args})
  set_tests_properties(test_install PROPERTIES
    ENVIRONMENT "${CLPHMM_TEST_ENV}"
    TIMEOUT 600)
  unset(_clphmm_install_test_args)
else()
  message(STATUS "bash not found: test_install is not registered")
endif()
