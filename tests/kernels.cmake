# The kernel builds the library can ask for (every built-in variant list,
# precision plan and shuffle backend), listed with the host's own option
# and source code for scripts/kernels-offline.sh, which compiles each with
# clang for AMD, NVIDIA and SPIR-V targets. The test checks the listing.
add_executable(kernel_variants kernel_variants.c)
target_include_directories(kernel_variants PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(kernel_variants PRIVATE clphmm_static)
clphmm_set_flags(kernel_variants)
add_test(NAME kernel_variants COMMAND kernel_variants
         ${CMAKE_CURRENT_BINARY_DIR}/kernel-variants)
set_tests_properties(kernel_variants PROPERTIES ENVIRONMENT "${CLPHMM_TEST_ENV}")
