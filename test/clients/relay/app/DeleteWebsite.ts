// Deleting a website removes it from Relay's store (useMutation's document).
import { graphql } from 'relay-runtime';

export const deleteWebsiteMutation = graphql`
  mutation DeleteWebsiteMutation($id: ID!) {
    deleteWebsite(id: $id) {
      deletedId @deleteRecord
      userErrors {
        message
      }
    }
  }
`;
