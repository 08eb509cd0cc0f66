/* The daemon's request loop policy (daemon/daemon.h): who may ask what,
 * logging, and the answers on the wire. The file system work of each
 * request is in daemon_ops.c.
 */
#include <errno.h>
#include <stdlib.h>

#include <openssl/crypto.h>

#include "ctrl/req.h"
#include "daemon/daemon.h"
#include "ferry/error.h"
#include "util/util.h"

static const struct {
	const char *name;
	unsigned rights; /* on req.path; 0: the op checks (TOKEN: write on
			    each file it names, not on the directory) */
} ops[] = {
	[FERRY_REQ_STAT] = { "stat", FERRY__RIGHT_READ },
	[FERRY_REQ_LIST] = { "list", FERRY__RIGHT_READ },
	[FERRY_REQ_CKSUM] = { "checksum", FERRY__RIGHT_READ },
	[FERRY_REQ_MKDIR] = { "mkdir", FERRY__RIGHT_WRITE },
	[FERRY_REQ_UNLINK] = { "unlink", FERRY__RIGHT_DELETE },
	[FERRY_REQ_RMDIR] = { "rmdir", FERRY__RIGHT_DELETE },
	[FERRY_REQ_TOKEN] = { "token", 0 },
	[FERRY_REQ_PUSH] = { "push", FERRY__RIGHT_READ }, /* by push.c */
};

static const char *op_name(uint32_t op)
{
	return op < FERRY__ARRAY_SIZE(ops) && ops[op].name ? ops[op].name :
							     "unknown";
}

/* May who make req at all? Returns 0, or -errno with why. */
static int admit(const struct ferry__daemon *d, const struct ferry__who *who,
		 const struct ferry_msg_req *req, char *why, size_t whylen)
{
	if (who->token) {
		ferry__why(why, whylen, "a transfer token opens one push "
			   "session and may make no requests");
		return -EACCES;
	}
	if (req->op == FERRY_REQ_PUSH || req->op >= FERRY__ARRAY_SIZE(ops) ||
	    !ops[req->op].name) {
		ferry__why(why, whylen, "this daemon does not serve request "
			   "op %u here", req->op);
		return -EOPNOTSUPP;
	}
	if (!ops[req->op].rights) {
		if (ferry__daemon_path_valid(req->path))
			return 0;
		ferry__why(why, whylen, "%s: not a valid path in the export "
			   "(no '..', '.' or empty components)",
			   ops[req->op].name);
		return -EINVAL;
	}
	return ferry__exports_allow(d->ex, who->name, ops[req->op].rights,
				    req->path, why, whylen);
}

/* A LIST answer: the children in REPLY batches, LAST on the final one
 * (an empty directory gets one empty LAST). */
static int send_list(int fd, struct ferry_msg *m,
		     const struct ferry_manifest *list, int timeout_ms)
{
	size_t next = 0;
	int err;

	do {
		m->u.reply.len = (uint32_t)ferry__manifest_encode(
			list, &next, m->u.reply.data, FERRY_REPLY_DATA_MAX);
		m->u.reply.flags = next == list->n ? FERRY_REPLY_LAST : 0;
		err = ferry__ctrl_send(fd, m, timeout_ms);
	} while (!err && next < list->n);
	return err;
}

int ferry__daemon_serve(struct ferry__daemon *d, const struct ferry__who *who,
			int fd, const struct ferry_msg_req *req,
			int timeout_ms)
{
	char why[FERRY_ERRTEXT_MAX] = "";
	const char *op = op_name(req->op);
	/* the client's path, shown as it names it (ferry__log and
	 * ferry__why escape it) */
	const char *sp = req->path[0] == '/' ? req->path + 1 : req->path;
	struct ferry_manifest list;
	struct ferry_msg *m;
	int err;

	ferry__log(FERRY_LOG_INFO, "key %s: %s /%.255s", who->name, op, sp);
	m = calloc(1, sizeof(*m));
	if (!m)
		return ferry__ctrl_send_error(fd, ENOMEM, "out of memory");
	ferry__manifest_init(&list);
	err = admit(d, who, req, why, sizeof(why));
	if (!err)
		err = ferry__daemon_do(d, who, req, &m->u.reply, &list, why,
				       sizeof(why));
	if (err) {
		if (!why[0])
			ferry__why(why, sizeof(why), "%s /%.200s: %s", op, sp,
				   ferry_strerror(err));
		ferry__log(FERRY_LOG_INFO, "key %s: %s /%.200s refused: %s",
			   who->name, op, sp, why);
		err = ferry__ctrl_send_error(fd, -err, "%s", why);
		goto out;
	}
	m->type = FERRY_MSG_REPLY;
	m->u.reply.op = req->op;
	m->u.reply.flags = FERRY_REPLY_LAST;
	if (req->op == FERRY_REQ_LIST)
		err = send_list(fd, m, &list, timeout_ms);
	else
		err = ferry__ctrl_send(fd, m, timeout_ms);
out:
	ferry__manifest_free(&list);
	OPENSSL_cleanse(m, sizeof(*m)); /* a TOKEN reply holds a secret */
	free(m);
	return err;
}
