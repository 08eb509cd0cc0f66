/* Loss models: parameters and their long-run loss rate. */
#include <errno.h>

#include "loss.h"

static bool is_prob(double x)
{
	return x >= 0 && x <= 1;
}

int wanem_loss_gilbert(double loss, double burst, struct wanem_loss_attr *a)
{
	double r, p;

	if (!(loss >= 0 && loss < 1) || !(burst >= 1))
		return -EINVAL;
	r = 1 / burst;
	p = r * loss / (1 - loss);
	if (p > 1)
		return -EINVAL;
	*a = (struct wanem_loss_attr){
		.kind = WANEM_LOSS_GE,
		.p = p,
		.r = r,
		.loss_good = 0,
		.loss_bad = 1,
	};
	return 0;
}

double wanem_loss_mean(const struct wanem_loss_attr *a)
{
	double bad;

	switch (a->kind) {
	case WANEM_LOSS_RANDOM:
		return a->p_loss;
	case WANEM_LOSS_GE:
		if (a->p + a->r <= 0)
			return a->loss_good; /* never leaves Good */
		bad = a->p / (a->p + a->r);
		return bad * a->loss_bad + (1 - bad) * a->loss_good;
	default:
		return 0;
	}
}

int wanem_loss_check(const struct wanem_loss_attr *a)
{
	switch (a->kind) {
	case WANEM_LOSS_NONE:
		return 0;
	case WANEM_LOSS_RANDOM:
		return is_prob(a->p_loss) ? 0 : -EINVAL;
	case WANEM_LOSS_GE:
		return is_prob(a->p) && is_prob(a->r) && is_prob(a->loss_good) &&
		       is_prob(a->loss_bad) ? 0 : -EINVAL;
	}
	return -EINVAL;
}

void wanem_loss_init(struct wanem_loss *l, const struct wanem_loss_attr *a)
{
	l->a = *a;
	l->bad = false;
}
