#include "check.h"

// Usage: gsf_core_tests [substring]   runs the test cases whose name contains it.
int main(int argc, char** argv) { return check::RunAll(argc > 1 ? argv[1] : nullptr); }
