-- AlterEnum
ALTER TYPE "CardOperationKind" ADD VALUE 'SYNC';
