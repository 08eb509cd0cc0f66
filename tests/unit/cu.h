/* A small CUnit front end shared by the unit tests. */
#ifndef FERRY_TEST_CU_H
#define FERRY_TEST_CU_H

#include <CUnit/Basic.h>
#include <stdio.h>

/* Run one suite of tests; returns a process exit code (0 = all passed). */
static inline int ferry_cu_run(const char *suite, CU_TestInfo *tests)
{
	CU_SuiteInfo suites[] = {
		{ suite, NULL, NULL, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

#endif
