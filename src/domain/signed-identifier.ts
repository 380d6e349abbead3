// A stored access policy (Set Table ACL, Set Queue ACL) as kept and as carried in XML.

/** One stored access policy; absent fields are left to the SAS (Azure REST: create-service-sas). */
export interface SignedIdentifier {
  readonly id: string;
  readonly start?: string;
  readonly expiry?: string;
  readonly permission?: string;
}
