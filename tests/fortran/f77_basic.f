! f77_basic.f: the mpif.h binding from fixed form: point-to-point with
! statuses and MPI_STATUS_IGNORE, collectives on Fortran types, strings.
      PROGRAM F77BASIC
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, ST(MPI_STATUS_SIZE), CNT, LEN
      INTEGER IBUF(4), REQ, REQS(2)
      DOUBLE PRECISION D, DS
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) PNAME
      LOGICAL L, LR
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      IF (RANK .EQ. 0) THEN
         DO I = 1, 4
            IBUF(I) = I * 10
         END DO
         CALL MPI_SEND(IBUF, 4, MPI_INTEGER, 1, 7, MPI_COMM_WORLD,
     &                 IERR)
         CALL MPI_ISEND(IBUF, 2, MPI_INTEGER, 1, 8, MPI_COMM_WORLD,
     &                  REQ, IERR)
         CALL MPI_WAIT(REQ, MPI_STATUS_IGNORE, IERR)
         IF (REQ .NE. MPI_REQUEST_NULL) STOP 3
      ELSE IF (RANK .EQ. 1) THEN
         CALL MPI_RECV(IBUF, 4, MPI_INTEGER, 0, MPI_ANY_TAG,
     &                 MPI_COMM_WORLD, ST, IERR)
         CALL MPI_GET_COUNT(ST, MPI_INTEGER, CNT, IERR)
         IF (ST(MPI_SOURCE) .NE. 0 .OR. ST(MPI_TAG) .NE. 7) STOP 4
         IF (CNT .NE. 4 .OR. IBUF(4) .NE. 40) STOP 5
         CALL MPI_IRECV(IBUF, 2, MPI_INTEGER, 0, 8, MPI_COMM_WORLD,
     &                  REQS(1), IERR)
         REQS(2) = MPI_REQUEST_NULL
         CALL MPI_WAITALL(2, REQS, MPI_STATUSES_IGNORE, IERR)
         IF (REQS(1) .NE. MPI_REQUEST_NULL) STOP 6
      END IF
      D = RANK + 1
      CALL MPI_ALLREDUCE(D, DS, 1, MPI_DOUBLE_PRECISION, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (DS .NE. NP * (NP + 1) / 2) STOP 7
      L = RANK .GE. 0
      CALL MPI_ALLREDUCE(L, LR, 1, MPI_LOGICAL, MPI_LAND,
     &                   MPI_COMM_WORLD, IERR)
      IF (.NOT. LR) STOP 8
      CALL MPI_GET_PROCESSOR_NAME(PNAME, LEN, IERR)
      IF (LEN .LE. 0 .OR. PNAME(LEN+1:LEN+1) .NE. ' ') STOP 9
      IF (MPI_WTIME() .LE. 0D0) STOP 10
      IF (RANK .EQ. 0) PRINT '(A,I0)', 'f77 ok ', NP
      CALL MPI_FINALIZE(IERR)
      END
