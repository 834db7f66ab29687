/*
 * p4e_version.c - placeholder until the engine lands (issue 3).
 */
const char *p4e_version(void);

const char *p4e_version(void)
{
	return "0.1";
}
