#include <errno.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"

static void test_strerror(void)
{
	CU_ASSERT_STRING_EQUAL(ferry_strerror(0), "success");
	CU_ASSERT_STRING_EQUAL(ferry_strerror(-FERRY_EAUTH),
			       "authentication failed (the peers' keys differ)");
	CU_ASSERT_STRING_EQUAL(ferry_strerror(-ENOENT),
			       "No such file or directory");
	CU_ASSERT_PTR_NOT_NULL(ferry_strerror(-999999));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "strerror", test_strerror },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("util", tests);
}
