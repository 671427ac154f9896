/*
 * arn.c — table ARNs and the region and account they carry (common/arn.h).
 */
#include "postgres.h"

#include "common/arn.h"

char	   *dynindex_region = NULL;
char	   *dynindex_account_id = NULL;

/* ARN of a table. */
char *
DynTableArn(const char *table_name)
{
	return psprintf("%stable/%s", DynArnPrefix(), table_name);
}

/* "arn:aws:dynamodb:<region>:<account>:" from dynindex.region and dynindex.account_id. */
char *
DynArnPrefix(void)
{
	return psprintf("arn:aws:dynamodb:%s:%s:", dynindex_region, dynindex_account_id);
}
