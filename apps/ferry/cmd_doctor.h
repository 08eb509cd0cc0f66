/* ferry doctor: check this host for bulk transfer. */
#ifndef FERRY_APP_CMD_DOCTOR_H
#define FERRY_APP_CMD_DOCTOR_H

int cmd_doctor(int argc, char **argv);

#endif
