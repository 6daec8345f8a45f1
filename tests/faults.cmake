# Fault injection: tests/clshim.c is an OpenCL library that forwards to the
# real ICD loader and fails chosen calls (see its header); test_faults loads
# it as clphmm's OpenCL library and forces each fault, and test_faults_cli
# checks what the `clphmm` command says when OpenCL is missing or fails.
add_library(cph_clshim MODULE clshim.c)
target_include_directories(cph_clshim PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${PROJECT_SOURCE_DIR}/include)
target_include_directories(cph_clshim SYSTEM PRIVATE
                           ${CLPHMM_OPENCL_INCLUDE_DIR})
target_link_libraries(cph_clshim PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
clphmm_set_flags(cph_clshim)

clphmm_add_test(test_faults test_faults.c workload.c)
target_compile_definitions(test_faults PRIVATE
  CLPHMM_TEST_SHIM="$<TARGET_FILE:cph_clshim>"
  CLPHMM_TEST_KERNELS="${PROJECT_SOURCE_DIR}/cl")
target_link_libraries(test_faults PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_faults cph_clshim)
# PoCL shares program binaries between processes only with its own kernel
# cache on (src/opencl/cache.c says why): that cache stays in the build tree.
set(CLPHMM_FAULTS_ENV ${CLPHMM_TEST_ENV})
# The faults need several programs (six damaged cache entries) and a
# shuffle backend to break: on CPUs, whose table has one vector variant per
# precision, they run the lane-group variants the CPU table had before.
list(APPEND CLPHMM_FAULTS_ENV
     "CLPHMM_VARIANTS=4x4/64,8x4/64,8x8/64,16x8/64,32x8/64"
     "CLPHMM_DOUBLE_VARIANTS=4x4/64,8x4/64,8x8/64,16x8/64,32x8/64")
set_tests_properties(test_faults PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77
                     ENVIRONMENT "${CLPHMM_FAULTS_ENV}")

# Determinism: bit-identical results whatever the chunking (test_determinism)
# and the OpenCL thread count (test_determinism_threads).
clphmm_add_test(test_determinism test_determinism.c workload.c)
set_tests_properties(test_determinism PROPERTIES TIMEOUT 1200
                     SKIP_RETURN_CODE 77)
if(CLPHMM_BASH)
  add_test(NAME test_determinism_threads
           COMMAND ${CLPHMM_BASH}
                   ${CMAKE_CURRENT_SOURCE_DIR}/test_determinism.sh
                   $<TARGET_FILE:test_determinism>
                   ${CMAKE_CURRENT_BINARY_DIR}/determinism)
  set_tests_properties(test_determinism_threads PROPERTIES
    ENVIRONMENT "${CLPHMM_TEST_ENV}" TIMEOUT 1200 SKIP_RETURN_CODE 77)
endif()

if(CLPHMM_BASH)
  add_test(NAME test_faults_cli
           COMMAND ${CLPHMM_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_faults_cli.sh
                   $<TARGET_FILE:clphmm_cli> $<TARGET_FILE:cph_clshim>
                   ${CMAKE_CURRENT_SOURCE_DIR}/data)
  set_tests_properties(test_faults_cli PROPERTIES
    ENVIRONMENT "${CLPHMM_TEST_ENV}" TIMEOUT 600)
endif()
