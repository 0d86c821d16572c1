# The Python package's pytest plugin on the example suite of numpy kernels, and its comparator
# against `kvbench check` on every default case (specs/python-package.md "The pytest plugin").
# Included at the end of tests/CMakeLists.txt (kvbench_script_test is defined there).
kvbench_script_test(pytest_plugin)
set_tests_properties(pytest_plugin PROPERTIES LABELS "full;python" COST 90)
kvbench_script_test(python_compare)
set_tests_properties(python_compare PROPERTIES LABELS "full;python" COST 150)
