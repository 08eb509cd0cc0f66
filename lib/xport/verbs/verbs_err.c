/* verbs transport: the one place where libibverbs and librdmacm results
 * become ferry's 0 / -errno.
 *
 * libibverbs returns a positive errno from the calls that return int
 * (ibv_post_send, ibv_modify_qp, ibv_destroy_*, ibv_query_*), NULL with
 * errno from those that create objects, and a negative count from
 * ibv_poll_cq. librdmacm returns -1 and sets errno (or NULL and errno).
 * Some providers have returned -errno or -1 from int calls over the years;
 * those become -EIO rather than a success. */
#include <errno.h>

#include "xport/verbs/verbs.h"

int ferry__verbs_ibv(int ret)
{
	if (ret == 0)
		return 0;
	if (ret > 0)
		return -ret;
	return ret == -1 ? -EIO : ret; /* already -errno */
}

int ferry__verbs_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

int ferry__verbs_cm(int ret)
{
	return ret == 0 ? 0 : ferry__verbs_errno();
}

int ferry__verbs_wc_err(enum ibv_wc_status st, bool cancelled)
{
	switch (st) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_WR_FLUSH_ERR:
		/* the QP went to error: we were cancelled, or the connection
		 * was torn down under us */
		return cancelled ? -ECANCELED : -FERRY_ECLOSED;
	case IBV_WC_REM_ACCESS_ERR:
		return -FERRY_EBOUNDS;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return -FERRY_ETIMEOUT;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
		return -FERRY_EPEER;
	case IBV_WC_LOC_LEN_ERR:
		/* a message longer than our receive buffers */
		return -FERRY_EPROTO;
	default:
		return -EIO;
	}
}
