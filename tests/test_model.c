#include "test_util.h"
int main(void) { CHECK(1, "stub"); return test_finish(); }
