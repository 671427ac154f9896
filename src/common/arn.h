/*
 * arn.h — the Amazon Resource Names dynindex gives its tables: the region
 * and account they carry (GUCs dynindex.region, dynindex.account_id, set in
 * _PG_init) and the table ARN.  A leaf: the catalog, the security checks'
 * messages and the operations all name tables by ARN.
 */
#ifndef DYNINDEX_ARN_H
#define DYNINDEX_ARN_H

/* ARN of a table: DynArnPrefix() + "table/<name>". */
extern char *DynTableArn(const char *table_name);
/* "arn:aws:dynamodb:<region>:<account>:" (GUCs dynindex.region, dynindex.account_id). */
extern char *DynArnPrefix(void);
/* GUCs: the region and account id that ARNs carry (the gateway sets the region per request). */
extern char *dynindex_region;
extern char *dynindex_account_id;

#endif
